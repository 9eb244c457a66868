import { atDoor } from './service-adapter.js';

describe('atDoor: what both adapters do with a request at their hook', () => {
  it.each([
    ['/plants', 'POST', 'followed'],
    ['/plants?x=1', 'GET', 'followed'],
    ['/health/ready', 'GET', 'followed'],
    ['/docs', 'GET', 'documentation'],
    ['/docs/', 'HEAD', 'documentation'],
    ['/openapi.json', 'GET', 'documentation'],
    ['/openapi.yaml', 'GET', 'documentation'],
    ['/docs', 'POST', 'refused'],
    ['/openapi.json', 'DELETE', 'refused'],
    ['/openapi.json', undefined, 'refused'],
  ] as const)('%s %s is %s', (url, method, expected) => {
    expect(atDoor(url, method)).toBe(expected);
  });
});
