// plant-store/testcontainers: the service's image for Testcontainers (optional peers:
// testcontainers and @testcontainers/postgresql).
export {
  PlantStoreContainer,
  type StartedPlantStore,
  type StartStep,
} from './plant-store-container.js';
