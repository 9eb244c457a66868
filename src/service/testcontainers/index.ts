// plant-store/testcontainers: the service's image for Testcontainers (optional peers:
// testcontainers and @testcontainers/postgresql).
export {
  PlantStoreContainer,
  type StartedPlantStore,
} from './plant-store-container.js';
