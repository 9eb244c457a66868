/** The packages the service bundle leaves to Node (see the .mjs beside it for why each). */
export const SERVICE_BUNDLE_EXTERNALS: readonly string[];
