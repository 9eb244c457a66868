// class-transformer keeps its decorators' metadata in this module, which its index does not
// re-export; the package ships the module's types under types/ rather than beside it.
declare module 'class-transformer/cjs/storage.js' {
  export { defaultMetadataStorage } from 'class-transformer/types/storage';
}
