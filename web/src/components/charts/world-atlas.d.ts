// world-atlas ships TopoJSON files without types; only the 110m land outline is imported (bundle size).
declare module 'world-atlas/land-110m.json' {
  import type { Topology, GeometryCollection } from 'topojson-specification';
  const topology: Topology<{ land: GeometryCollection }>;
  export default topology;
}
