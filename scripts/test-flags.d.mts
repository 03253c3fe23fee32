export declare const DEFAULT_TEST_TIMEOUT_MS: number;
export declare const NODE_TEST_FLAGS: readonly string[];
