/**
 * The schema of a query string or body that takes nothing: what every scoped route without one of its own gets, so
 * that an unknown parameter or a body where the request is "none" is 400. The OpenAPI document leaves it out.
 */
export const NO_PROPERTIES = { type: 'object', properties: {}, additionalProperties: false } as const;

export const isNoProperties = (schema: unknown): boolean => {
  const s = schema as { type?: unknown; properties?: object; additionalProperties?: unknown } | undefined;
  return !!s && s.type === 'object' && s.additionalProperties === false && !!s.properties && Object.keys(s.properties).length === 0;
};
