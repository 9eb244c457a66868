export const DOCS_STYLE_APP: string;
export function buildDocsStyleApp(): void;
