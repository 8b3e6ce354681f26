/**
 * An organisation's plan (docs/reminder-flows.md, "The plan"): `standard` (the default) or `pro`. Only `pro`
 * includes reminder flows; every `/v1/reminder-flows…` route answers 403 `plan_required` without it, right after
 * authentication. Set by the operator command (`create-org --plan`, `update-org --plan`).
 */
export const PLANS = ['standard', 'pro'] as const;
export type Plan = (typeof PLANS)[number];

export const DEFAULT_PLAN: Plan = 'standard';

export const isPlan = (value: string): value is Plan => (PLANS as readonly string[]).includes(value);
