/**
 * The runtime floor, checked before anything else loads: `main.ts` imports this module first, so on
 * a Node.js older than 22.19 (what `effect` 4 and `@effect/platform-node` need; on Node 20 the HTTP
 * client crashes at import) the bin prints ONE line naming the version it needs and exits 2
 * (`ExitCode.Usage`) instead of a stack trace. It imports nothing.
 *
 * @since 0.1.0
 */

/**
 * The oldest Node.js the CLI runs on, as `[major, minor]`.
 *
 * @since 0.1.0
 * @category constants
 */
export const floor: readonly [major: number, minor: number] = [22, 19]

/**
 * `true` when `version` (`process.versions.node`, e.g. `22.23.3`) is at least {@link floor}.
 *
 * @since 0.1.0
 * @category utils
 */
export const supported = (version: string): boolean => {
  const [major = 0, minor = 0] = version.split(".").map(Number)
  return major > floor[0] || (major === floor[0] && minor >= floor[1])
}

if (!supported(process.versions.node)) {
  process.stderr.write(`harness needs Node.js ${floor.join(".")} or newer (this is Node.js ${process.versions.node})\n`)
  process.exit(2)
}
