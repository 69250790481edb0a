// Small helpers to build the page's elements; text always goes in as text, never as HTML.

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<'className' | 'text' | 'type' | 'title', string>> = {},
  ...children: (Node | null)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.className) node.className = props.className;
  if (props.text !== undefined) node.textContent = props.text;
  if (props.type && 'type' in node) (node as HTMLButtonElement).type = props.type as 'button';
  if (props.title) node.title = props.title;
  for (const child of children) if (child) node.append(child);
  return node;
}

export function byId<E extends HTMLElement>(id: string): E {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no #${id}`);
  return node as E;
}

/** Calls `run` once no call came for `ms` milliseconds. */
export function debounce<A extends unknown[]>(ms: number, run: (...args: A) => void): (...args: A) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => run(...args), ms);
  };
}
