import { TRPCError } from "@trpc/server";
import type { DomainError } from "../../core/errors";
import { TRPC_CODE } from "../shared/errors";

/** A DomainError (or an unreachable database) as the TRPCError with the table's code (server/api/shared/errors.ts). */
export function toTrpcError(cause: DomainError): TRPCError {
  return new TRPCError({ code: TRPC_CODE[cause.code], message: cause.message, cause });
}
