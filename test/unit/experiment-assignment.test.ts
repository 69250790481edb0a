// The treatment a user gets in an A/B experiment: the same for the same ids every time, spread over
// many users in the shares of the split, independent between experiments; and the configuration
// rules an experiment must meet.
import { describe, expect, it } from 'vitest';
import { assignTreatment, bucket, treatmentAt } from '../../server/domain/experiments/assignment.js';
import { checkConfig } from '../../server/domain/experiments/config.js';
import { HttpError } from '../../server/errors.js';

const EXPERIMENT = '6f1c2a4e-0b7d-4c1e-9a53-2d8e5f7a9b10';
const OTHER_EXPERIMENT = 'a3d9e8b7-51c4-4f2a-8e6d-0c1b2a394857';
const users = Array.from({ length: 10_000 }, (_, i) => `user-${i}`);
const split = (control: number) => ({ control_name: 'control', control_split: control, t1_name: 'new ranking', t1_split: 1 - control });

function shares(experimentId: string, control: number): { control: number; t1: number } {
  let inControl = 0;
  for (const user of users) if (assignTreatment(experimentId, user, split(control)) === 'control') inControl += 1;
  return { control: inControl / users.length, t1: 1 - inControl / users.length };
}

describe('a user’s place in an experiment', () => {
  it('is the same every time for the same ids, and a fraction in [0, 1)', () => {
    for (const user of users.slice(0, 200)) {
      const place = bucket(EXPERIMENT, user);
      expect(place).toBeGreaterThanOrEqual(0);
      expect(place).toBeLessThan(1);
      expect(bucket(EXPERIMENT, user)).toBe(place);
    }
    // A fixed value, the first 6 bytes of SHA-256("<experiment id>:<user id>") over 2^48: the place
    // depends on nothing else (no seed, no process), so it survives restarts and other instances.
    expect(bucket(EXPERIMENT, 'user-0')).toBe(0.7088276353524101);
  });

  it('spreads 10,000 users evenly over [0, 1)', () => {
    const tenths = new Array(10).fill(0);
    for (const user of users) tenths[Math.floor(bucket(EXPERIMENT, user) * 10)] += 1;
    for (const count of tenths) expect(Math.abs(count - 1000)).toBeLessThan(100);
  });

  it('differs between experiments, so one experiment’s treatment does not decide another’s', () => {
    let same = 0;
    for (const user of users) if (assignTreatment(EXPERIMENT, user, split(0.5)) === assignTreatment(OTHER_EXPERIMENT, user, split(0.5))) same += 1;
    expect(Math.abs(same / users.length - 0.5)).toBeLessThan(0.03);
  });
});

describe('the treatment chosen', () => {
  it.each([0.5, 0.9, 0.25, 0.01])('gives each treatment its share of 10,000 users (control %s)', (control) => {
    const got = shares(EXPERIMENT, control);
    expect(Math.abs(got.control - control)).toBeLessThan(0.02);
    expect(Math.abs(got.t1 - (1 - control))).toBeLessThan(0.02);
  });

  it('never chooses a treatment whose share is 0', () => {
    expect(shares(EXPERIMENT, 1)).toEqual({ control: 1, t1: 0 });
    expect(shares(EXPERIMENT, 0)).toEqual({ control: 0, t1: 1 });
    // Shares a rounding away from 1 still never reach the empty treatment.
    const nearlyAll = { control_name: 'control', control_split: 0.9999999, t1_name: 't1', t1_split: 0 };
    expect(treatmentAt(0.99999999, nearlyAll)).toBe('control');
  });

  it('cuts [0, 1) at the control’s share, the control first', () => {
    expect(treatmentAt(0, split(0.3))).toBe('control');
    expect(treatmentAt(0.2999, split(0.3))).toBe('control');
    expect(treatmentAt(0.3001, split(0.3))).toBe('new ranking');
    expect(treatmentAt(0.9999, split(0.3))).toBe('new ranking');
  });
});

describe('an experiment’s configuration', () => {
  const config = { area: ' search ', control_name: ' control ', control_split: 0.7, t1_name: 't1', t1_split: 0.3 };
  const refusal = (change: Record<string, unknown>): string => {
    try {
      checkConfig({ ...config, ...change });
    } catch (error) {
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).status).toBe(400);
      return (error as HttpError).message;
    }
    throw new Error(`accepted ${JSON.stringify(change)}`);
  };

  it('is stored with names trimmed', () => {
    expect(checkConfig(config)).toEqual({ area: 'search', control_name: 'control', control_split: 0.7, t1_name: 't1', t1_split: 0.3 });
  });

  it('accepts shares that add up to 1 as 32-bit floats do', () => {
    expect(checkConfig({ ...config, control_split: Math.fround(0.7), t1_split: Math.fround(0.3) }).t1_split).toBe(Math.fround(0.3));
  });

  it('refuses shares that do not add up to 1, or lie outside [0, 1], naming them', () => {
    expect(refusal({ t1_split: 0.2 })).toMatch(/control_split and t1_split must add up to 1, they add up to 0\.9/);
    expect(refusal({ control_split: 1.5, t1_split: -0.5 })).toMatch(/control_split must be between 0 and 1/);
    expect(refusal({ control_split: 0.5, t1_split: 0.6 })).toMatch(/add up to 1/);
  });

  it('refuses two treatments of one name, and blank names', () => {
    expect(refusal({ t1_name: 'control ' })).toMatch(/control_name and t1_name must differ/);
    expect(refusal({ t1_name: '  ' })).toMatch(/experiment_config\.t1_name must have more than white space/);
    expect(refusal({ control_name: '' })).toMatch(/experiment_config\.control_name/);
    expect(refusal({ area: '\n' })).toMatch(/experiment_config\.area/);
  });
});
