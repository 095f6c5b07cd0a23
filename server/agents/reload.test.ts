import { describe, expect, it } from "vitest";
import { redactSecrets } from "./reload";

describe("the effective configuration view", () => {
  it("hides inline secrets and cuts every URL to its origin (a webhook's path is its credential)", () => {
    const shown = redactSecrets({
      notify: { channels: [{ kind: "slack", url: "https://hooks.slack.com/services/T000/B000/XXXXSECRET", signingSecret: "s3cret" }] },
      agents: [{ endpoint: { baseURL: "http://user:pw@127.0.0.1:8080/v1?key=abc", headers: { authorization: "Bearer k" } } }, { endpoint: { baseURL: "https://models.example.com/" } }],
    });
    const text = JSON.stringify(shown);
    for (const secret of ["XXXXSECRET", "s3cret", "pw@", "key=abc", "Bearer k"]) expect(text).not.toContain(secret);
    expect(shown.notify.channels[0]?.url).toBe("https://hooks.slack.com/[redacted]");
    expect(shown.agents[0]?.endpoint.baseURL).toBe("http://127.0.0.1:8080/[redacted]");
    expect(shown.agents[1]?.endpoint.baseURL).toBe("https://models.example.com");
  });
});
