import type { HTMLAttributes, ReactNode } from "react";

/** One column of a list table. `actions` pins it to the right edge while the table scrolls sideways. */
export type TColumn<R> = {
  key: string;
  header: ReactNode;
  cell: (row: R) => ReactNode;
  /** `num` right-aligns, `nowrap` keeps one line, `actions` pins the column. */
  kind?: "num" | "nowrap" | "actions";
  className?: string;
};

type TRowAttributes = HTMLAttributes<HTMLTableRowElement> & Record<`data-${string}`, string | undefined>;

type TProps<R> = {
  columns: ReadonlyArray<TColumn<R> | null | false>;
  rows: readonly R[];
  rowKey: (row: R) => string;
  /** Test id and data attributes of each row (kept per page, e.g. `data-testid="response-row"`). */
  rowProps?: (row: R) => TRowAttributes;
  testId?: string;
  caption?: string;
  /** Extra rows under a row (e.g. an expanded detail), spanning the table. */
  after?: (row: R) => ReactNode;
};

const cellClass = (c: { kind?: string; className?: string }): string | undefined =>
  [c.kind === "actions" ? "nowrap col-actions" : c.kind, c.className].filter(Boolean).join(" ") || undefined;

/** The one table of the console's lists: a header, a row per item, pinned action columns. */
export function DataTable<R>({ columns, rows, rowKey, rowProps, testId, caption, after }: TProps<R>) {
  const shown = columns.filter((c): c is TColumn<R> => Boolean(c));
  return (
    <div className="table-wrap">
      <table className="table" data-testid={testId}>
        {caption ? <caption className="visually-hidden">{caption}</caption> : null}
        <thead>
          <tr>
            {shown.map((c) => (
              <th key={c.key} scope="col" className={c.kind === "actions" ? "col-actions" : c.kind === "num" ? "num" : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const key = rowKey(r);
            return (
              <RowGroup key={key} extra={after?.(r)} columns={shown.length}>
                <tr {...rowProps?.(r)}>
                  {shown.map((c) => (
                    <td key={c.key} className={cellClass(c)}>
                      {c.cell(r)}
                    </td>
                  ))}
                </tr>
              </RowGroup>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function RowGroup({ children, extra, columns }: { children: ReactNode; extra: ReactNode; columns: number }) {
  return (
    <>
      {children}
      {extra ? (
        <tr className="row-extra">
          <td colSpan={columns}>{extra}</td>
        </tr>
      ) : null}
    </>
  );
}
