/** Whether this system has a Linux-style /proc (marker scans and zombie checks need it). */
export declare const HAS_PROC: boolean;
/** Calls `test` with the contents of /proc/<pid>/<file> for each readable process; stops when it returns true. */
export declare function scanProc(file: string, test: (pid: number, content: string) => boolean): void;
/** The state letter and process group of a /proc/<pid>/stat line (read from the last ')'). */
export declare function statFields(stat: string): { state: string; pgrp: number };
/** True if any non-zombie process is in the group. */
export declare function groupAlive(pgid: number): boolean;
/** Sends `sig` to the whole process group; a group that is already gone is the goal anyway. */
export declare function signalGroup(pgid: number, sig: NodeJS.Signals): void;
