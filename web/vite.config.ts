import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Built into web/dist, which the gateway serves: the customer site (index.html) at / and
// /t/{tenant}/, the staff console (console.html) at /console, assets at /assets/.
export default defineConfig({
  plugins: [react()],
  base: "/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    rollupOptions: { input: { site: "index.html", console: "console.html" } },
  },
});
