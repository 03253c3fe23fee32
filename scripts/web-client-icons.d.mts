export declare function iconPng(size: number): Buffer;
