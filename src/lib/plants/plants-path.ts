/**
 * Where the plant routes are, below a host's global prefix: the create
 * (PlantsController) and the 405 answer to every other method (PlantsMethodsController).
 */
export const PLANTS_PATH = 'plants';
