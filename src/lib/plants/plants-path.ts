/** The plant routes' path, below a host's global prefix. */
export const PLANTS_PATH = 'plants';
