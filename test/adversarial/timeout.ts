// The adversarial tests run many requests each; the deep variants run far longer still.
jest.setTimeout(process.env.DEEP ? 3_600_000 : 120_000);
