/**
 * `encode` memoized per object: a live event (a frame, an activity message) reaches every stream
 * that follows it as the same object, and is encoded once for all of them instead of once per
 * stream while the others wait. Only for objects never changed once published.
 */
export function encodedOnce<T extends object>(encode: (value: T) => string): (value: T) => string {
  const texts = new WeakMap<T, string>();
  return (value) => {
    let text = texts.get(value);
    if (text === undefined) {
      text = encode(value);
      texts.set(value, text);
    }
    return text;
  };
}
