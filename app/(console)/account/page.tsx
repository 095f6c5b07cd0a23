import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { AccountPage } from "@/components/account-page";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("meta"))("account") };
}

export default function AccountRoute() {
  return <AccountPage />;
}
