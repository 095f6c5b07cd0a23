import type { ReactNode } from "react";

/**
 * The head of every console page: its title, one line under it, and what sits at the right
 * (a live indicator, a filter, a link); `below` holds a second line under the lede.
 */
export function PageHead({ title, lede, below, children }: { title: ReactNode; lede: ReactNode; below?: ReactNode; children?: ReactNode }) {
  return (
    <div className="page-head">
      <div>
        <h1>{title}</h1>
        <p className="muted">{lede}</p>
        {below}
      </div>
      {children}
    </div>
  );
}
