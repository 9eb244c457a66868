import { CreatePlants1763769600000 } from './1763769600000-create-plants.js';

/** Every migration, oldest first. Listed, not globbed, so the build and tests agree. */
export const MIGRATIONS = [CreatePlants1763769600000];
