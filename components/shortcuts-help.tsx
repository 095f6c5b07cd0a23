import { Kbd } from "./filters";

/** The inbox's keyboard shortcuts (toggled with `?`). */
export function ShortcutsHelp() {
  return (
    <div className="card shortcuts-help" data-testid="shortcuts-help">
      <h2>Keyboard shortcuts</h2>
      <dl className="shortcut-list">
        <dt>
          <Kbd>j</Kbd> <Kbd>k</Kbd>
        </dt>
        <dd>Next / previous request</dd>
        <dt>
          <Kbd>a</Kbd>
        </dt>
        <dd>Approve the selected request (high risk asks for confirmation)</dd>
        <dt>
          <Kbd>d</Kbd>
        </dt>
        <dd>Deny the selected request</dd>
        <dt>
          <Kbd>e</Kbd>
        </dt>
        <dd>Edit the arguments (a form from the tool&apos;s schema, or JSON); the changes are shown before you approve</dd>
        <dt>
          <Kbd>r</Kbd>
        </dt>
        <dd>Reply instead: deny with a message the agent receives</dd>
        <dt>
          <Kbd>g</Kbd>
        </dt>
        <dd>Standing grant: opens the choice; a grant button then asks you to confirm its scope</dd>
        <dt>
          <Kbd>x</Kbd>
        </dt>
        <dd>Add to / remove from the bulk selection (low and medium risk only)</dd>
        <dt>
          <Kbd>o</Kbd>
        </dt>
        <dd>Open the selected request&apos;s response</dd>
        <dt>
          <Kbd>Esc</Kbd>
        </dt>
        <dd>Clear the bulk selection, close this help</dd>
      </dl>
    </div>
  );
}
