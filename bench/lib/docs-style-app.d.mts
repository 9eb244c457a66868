export const DOCS_STYLE_APP: string;
export function buildDocsStyleApp(): void;
/** Compiles it unless compiled from the sources as they are; resolves to whether it did. */
export function ensureDocsStyleApp(): Promise<boolean>;
