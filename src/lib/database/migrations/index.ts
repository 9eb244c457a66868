import { CreatePlants1763769600000 } from './1763769600000-create-plants.js';
import { CreateApiTokens1763856000000 } from './1763856000000-create-api-tokens.js';
import { NotifyApiTokenChanges1764000000000 } from './1764000000000-notify-api-token-changes.js';
import { CreateCommitProbe1795392000000 } from './1795392000000-create-commit-probe.js';

/** Every migration, oldest first. Listed, not globbed, so the build and tests agree. */
export const MIGRATIONS = [
  CreatePlants1763769600000,
  CreateApiTokens1763856000000,
  NotifyApiTokenChanges1764000000000,
  CreateCommitProbe1795392000000,
];
