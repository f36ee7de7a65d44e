import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Built into web/dist, which the gateway serves: the page at / and /t/{tenant}/, assets at /assets/.
export default defineConfig({
  plugins: [react()],
  base: "/",
  build: { outDir: "dist", emptyOutDir: true, assetsInlineLimit: 0 },
});
