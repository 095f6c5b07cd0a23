/**
 * A minimal harness plugin, loaded only through the plugins configuration (never imported by the
 * host). Its model side is deterministic: a text input is echoed back; `run: <command>` asks the
 * host to run `exec` with that command (the agent's policy makes it an approval; the host
 * confines and records it) and then reports what the command printed. It records one trajectory
 * fact per turn through its host capabilities and tags `exec` results with tool-result middleware.
 */
import type { TCountersignPlugin, TConversationEntry } from "../../../plugin-sdk";

const textOf = (input: unknown): string => (typeof input === "string" ? input : "");

const lastToolOutput = (conversation: readonly TConversationEntry[]): unknown => {
  const last = conversation[conversation.length - 1];
  return last?.role === "tool" ? last.output : undefined;
};

const plugin: TCountersignPlugin = {
  register(api) {
    api.registerHarness({
      id: "echo-native",
      parseInput: (input) => (typeof input === "string" && input.trim() !== "" ? { ok: true } : { ok: false, message: "The echo-native harness takes a text input." }),
      createDriver: ({ input, hostCapabilities }) => ({
        nextTurn: async (conversation, turnIndex, _signal, _stream, beforeDispatch) => {
          // The host's guard, called right before the (here imaginary) request goes out.
          beforeDispatch?.();
          hostCapabilities.trajectory.recordEvent("echo_native.turn", { turn: turnIndex });
          // A turn's `usage` is what the host reports (reportOutputTokens once per response); calling it here too would count twice.
          const text = textOf(input);
          if (turnIndex === 0) {
            const command = text.match(/^run:\s*(.+)$/s)?.[1];
            if (command) return { text: "Running it.", toolCalls: [{ name: "exec", arguments: { command } }], usage: { outputTokens: 1 } };
            return { text: `echo: ${text}`, toolCalls: [], usage: { outputTokens: 1 } };
          }
          if (turnIndex === 1) return { text: ` Result: ${JSON.stringify(lastToolOutput(conversation))}`, toolCalls: [], usage: { outputTokens: 1 } };
          return null;
        },
      }),
    });
    api.registerAgent({
      name: "echo-native",
      harness: "echo-native",
      description: "The echo-native example plugin's agent: echoes, or runs `run: <command>` after approval.",
      tools: ["exec"],
      approval: { exec: "always" },
      maxTurns: 4,
    });
    // Runs before the model sees an exec result; the host keeps an original failure visible.
    api.registerAgentToolResultMiddleware(
      (event) => ({ result: { ...(typeof event.result === "object" && event.result !== null ? event.result : { value: event.result }), seenBy: api.manifest.id } }),
      { matcher: ["exec"] },
    );
    api.log.info("echo-native registered");
  },
};

export default plugin;
