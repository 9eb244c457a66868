// What the load generators send: unique ids spread over the key space and realistic bodies.
import { randomBytes } from 'node:crypto';

// Load ids live in [1, 2^44) and are never a multiple of 2^20; preloaded rows use exactly
// those multiples (PRELOAD_STRIDE * g, g <= 10M < 2^24), so the two sets never meet and
// a preloaded table never answers 409. All ids stay below 2^53: the baseline parses with
// JSON.parse, which would round larger ones (the service's lossless parser would not).
const KEY_BITS = 44n;
const KEY_MASK = (1n << KEY_BITS) - 1n;
export const PRELOAD_STRIDE = 1n << 20n;
// Odd, so multiplying by it modulo 2^44 is a bijection: a counter never repeats an id,
// and consecutive ids land far apart, so inserts hit random leaves of the primary key
// index (as client-chosen ids would) rather than always its right-most page.
const SPREAD = 0x9e3779b97f4a7c15n & KEY_MASK;

const GENERA = [
  'Monstera',
  'Ficus',
  'Calathea',
  'Philodendron',
  'Pilea',
  'Sansevieria',
  'Kalanchoë',
  'Aloe',
  'Begonia',
  'Anthurium',
  'Peperomia',
  'Alocasia',
  'Echeveria',
  'Hoya',
  'Dracaena',
  'Spathiphyllum',
];
const EPITHETS = [
  'deliciosa',
  'lyrata',
  'elastica',
  'orbifolia',
  'peperomioides',
  'trifasciata',
  'blossfeldiana',
  'vera',
  'maculata',
  'andraeanum',
  'obtusifolia',
  'zebrina',
  'elegans',
  'carnosa',
  'marginata',
  'wallisii',
];
const CULTIVARS = ["'Bambino'", "'Tineke'", "'Variegata'", "'Pink Princess'"];
const TAGS = [
  'tropical',
  'succulent',
  'low light',
  'pet safe',
  'air purifier',
  'flowering',
  'hanging',
  'rare',
];

/** 256 distinct name/tag pairs, names 9 to 30 characters, a tag on half. */
function makePlants() {
  const plants = [];
  let n = 0;
  for (const genus of GENERA) {
    for (const epithet of EPITHETS) {
      let name = `${genus} ${epithet}`;
      const cultivar = CULTIVARS[n % CULTIVARS.length];
      if (n % 3 === 0 && name.length + cultivar.length < 30)
        name += ` ${cultivar}`;
      const tag = n % 2 === 0 ? TAGS[(n >> 1) % TAGS.length] : undefined;
      plants.push({ name, tag });
      n += 1;
    }
  }
  return plants;
}

const PLANTS = makePlants();

export function newToken() {
  return randomBytes(24).toString('base64url'); // 32 characters
}

/**
 * One source of unique ids and bodies for the whole run, so no two requests of any
 * scenario share an id. `spread: false` gives increasing ids instead (as time-ordered ids
 * would be), which only ever touch the right-most page of the index. `next()` gives the id (decimal digits), the body and the plant the
 * answer must equal.
 */
export function createWorkload({ start = 1, spread = true } = {}) {
  let counter = BigInt(start);
  let sequence = 0;
  const factor = spread ? SPREAD : 1n;
  return {
    next() {
      let id;
      do {
        id = (counter * factor) & KEY_MASK;
        counter += 1n;
      } while (id % PRELOAD_STRIDE === 0n);
      const plant = PLANTS[sequence++ % PLANTS.length];
      const digits = id.toString();
      // The id goes in as raw digits: a JSON integer literal, as a client would write it.
      const body =
        `{"id":${digits},"name":${JSON.stringify(plant.name)}` +
        (plant.tag === undefined
          ? '}'
          : `,"tag":${JSON.stringify(plant.tag)}}`);
      return { id: digits, body, plant };
    },
  };
}

/** Whether an answer's body is the plant that was sent: `{name, tag?}`, nothing else. */
export function answerMatches(text, plant) {
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    return false;
  }
  if (answer === null || typeof answer !== 'object') return false;
  const keys = Object.keys(answer).sort().join(',');
  const expectedKeys = plant.tag === undefined ? 'name' : 'name,tag';
  return (
    keys === expectedKeys &&
    answer.name === plant.name &&
    answer.tag === plant.tag
  );
}
