/**
 * Types of a call, read from the generated `paths` (src/schema.ts): the path, query and
 * body an operation takes and what it answers. A route or schema the server changes changes
 * these, so the wrapper fails to compile instead of drifting.
 */
import type { paths } from "./schema.js";

export type Method = "get" | "post" | "put" | "patch" | "delete";
export type Path = keyof paths;

/** The operation at a path and method (never when the route has no such method). */
export type Operation<P extends Path, M extends Method> =
  paths[P] extends { [K in M]: infer O } ? O : never;

type ParametersOf<O> = O extends { parameters: infer X } ? X : never;
export type PathParams<O> = ParametersOf<O> extends { path: infer Q } ? Q : never;
export type QueryParams<O> = ParametersOf<O> extends { query: infer Q } ? Q
  : ParametersOf<O> extends { query?: infer Q } ? Exclude<Q, undefined> : never;
type JsonOf<R> = R extends { content: { "application/json": infer B } } ? B : never;
// a route without a body has `requestBody?: never`: JsonOf distributes over never to never
export type JsonBody<O> = O extends { requestBody?: infer R } ? JsonOf<Exclude<R, undefined>> : never;

/** The JSON of the operation's success (200 or 201); undefined for a 204. */
export type Answer<O> =
  O extends { responses: { 200: { content: { "application/json": infer R } } } } ? R
    : O extends { responses: { 201: { content: { "application/json": infer R } } } } ? R
      : undefined;

type Part<K extends string, T> = [T] extends [never] ? { [_ in K]?: never } : { [_ in K]: T };

/** What a call passes: path parameters, query and body, each where the operation has one. */
export type RequestParts<O> = Part<"path", PathParams<O>> & Part<"query", QueryParams<O>>
  & Part<"body", JsonBody<O>> & { signal?: AbortSignal; headers?: Record<string, string> };

/** `/v1/memories/{memory_id}` with `{memory_id: "m1"}`: each value URL-encoded. */
export function fillPath(template: string, values: Record<string, unknown> | undefined): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values?.[name];
    if (value === undefined || value === null) throw new TypeError(`missing path parameter '${name}'`);
    return encodeURIComponent(String(value));
  });
}

/** A query string; arrays repeat the parameter, undefined and null are left out. */
export function queryString(query: Record<string, unknown> | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== undefined && one !== null) params.append(name, String(one));
    }
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}
