// The inspector's JavaScript (make inspector-test runs this from the
// repository root: eslint -c tests/inspector/eslint.config.js).
import js from "@eslint/js";

const browser = {
  window: "readonly", document: "readonly", console: "readonly", URL: "readonly", fetch: "readonly",
};
const node = {
  process: "readonly", console: "readonly", URL: "readonly", Buffer: "readonly", setTimeout: "readonly",
  clearTimeout: "readonly", fetch: "readonly", performance: "readonly",
  // inside page.evaluate(), which runs in the page
  window: "readonly", sessionStorage: "readonly", requestAnimationFrame: "readonly",
};

export default [
  js.configs.recommended,
  {
    // The page: classic scripts sharing window.CQI; three.js is window.THREE.
    files: ["inspector/www/**/*.js"],
    languageOptions: {ecmaVersion: 2022, sourceType: "script", globals: browser},
    rules: {
      "no-implicit-globals": "error",
      "no-var": "error",
      "prefer-const": "error",
      eqeqeq: "error",
      strict: ["error", "function"],
      "no-unused-vars": ["error", {caughtErrors: "none"}],
    },
  },
  {
    files: ["tests/inspector/**/*.js", "tests/inspector/**/*.mjs"],
    languageOptions: {ecmaVersion: 2022, sourceType: "module", globals: node},
    rules: {"no-var": "error", "prefer-const": "error", eqeqeq: "error"},
  },
];
