// The one free-port picker lives in the package, for plant-store/testing; the tests and the
// benchmark (bench/, plain JavaScript on Node 24, which strips the types) take it from there.
// Its types are in free-port.d.mts.
export { freePort } from '../src/service/testing/free-port.ts';
