// comlink ships the node adapter's types beside its .mjs without an exports map that names them.
declare module 'comlink/dist/esm/node-adapter.mjs' {
  export { default } from 'comlink/dist/esm/node-adapter';
}
