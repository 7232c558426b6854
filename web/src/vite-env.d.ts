// Types for what Vite handles beyond TypeScript: CSS imports and import.meta.env.
/// <reference types="vite/client" />
