// plant-store/testing: the service started for another project's test run.
export {
  type PlantStoreOptions,
  type RunningPlantStore,
  startPlantStore,
} from './start-plant-store.js';
export { type SharedPostgres, startSharedPostgres } from './shared-postgres.js';
export type { DatabaseOutage, StoreFaults } from './store-faults.js';
export type { StoreTokens } from './store-tokens.js';
