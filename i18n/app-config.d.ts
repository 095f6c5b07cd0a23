import type { TMessages } from "./catalogues";
import type { TLocale } from "./locales";

declare module "next-intl" {
  interface AppConfig {
    Locale: TLocale;
    Messages: TMessages;
  }
}
