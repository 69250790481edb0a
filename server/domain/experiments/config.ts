// The rules of an experiment's configuration: two treatments with different names, shares between
// 0 and 1 that add up to 1, names and area with more than white space. No I/O here.
import type * as T from '../../../sdk/src/generated/types.gen.js';
import { badRequest } from '../../errors.js';

/** How far from 1 the two shares may add up to: the reference sends them as 32-bit floats. */
const SUM_TOLERANCE = 1e-6;

/** A name with more than white space, without the white space around it; 400 naming the field otherwise. */
export function nameOf(field: string, value: string): string {
  const trimmed = value.trim();
  if (!trimmed) throw badRequest(`${field} must have more than white space`);
  return trimmed;
}

function shareOf(field: string, value: number): number {
  if (!Number.isFinite(value) || value < 0 || value > 1) throw badRequest(`${field} must be between 0 and 1, not ${value}`);
  return value;
}

/** The configuration as stored, or a 400 naming what is wrong with it. */
export function checkConfig(config: T.ExperimentConfig): T.ExperimentConfig {
  const checked = {
    area: nameOf('experiment_config.area', config.area),
    control_name: nameOf('experiment_config.control_name', config.control_name),
    control_split: shareOf('experiment_config.control_split', config.control_split),
    t1_name: nameOf('experiment_config.t1_name', config.t1_name),
    t1_split: shareOf('experiment_config.t1_split', config.t1_split),
  };
  if (checked.control_name === checked.t1_name) {
    throw badRequest(`experiment_config.control_name and t1_name must differ, both are "${checked.t1_name}"`);
  }
  const sum = checked.control_split + checked.t1_split;
  if (Math.abs(sum - 1) > SUM_TOLERANCE) {
    throw badRequest(`experiment_config.control_split and t1_split must add up to 1, they add up to ${Number(sum.toFixed(6))}`);
  }
  return checked;
}
