export declare function packageVersion(root?: string): string;
export declare function versionDefine(version: string): Record<string, string>;
