// plant-store/testing: the service started for another project's test run.
export {
  type PlantStoreOptions,
  type RunningPlantStore,
  startPlantStore,
} from './start-plant-store.js';
