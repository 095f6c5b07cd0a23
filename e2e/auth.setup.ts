import { test as setup } from "@playwright/test";
import { demoCredentials, SIGNED_IN_STATE, signIn } from "./support";

// Signs the demo operator in once; tests that are not about logging in reuse the session.
setup("sign in the demo operator", async ({ page }) => {
  await signIn(page, await demoCredentials());
  await page.context().storageState({ path: SIGNED_IN_STATE });
});
