/**
 * Mulberry32: numbers in [0, 1) from a 32-bit seed, the same sequence for the same seed on every
 * run and machine. For workloads that must be random in shape and repeatable (the seeded storage
 * faults, the bench's trickle schedule), never for anything secret.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
