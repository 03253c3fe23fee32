// Registers the service worker (web/client/sw.ts, built as sw.js beside the
// page): relative to the page, with the page's folder as its scope, so it
// follows any path prefix a proxy puts the page under (web/client/endpoint.ts).
// Where there is none (a page over plain HTTP on a LAN is no secure context),
// the page works as before, without an offline shell or notifications.

/** The worker's registration once it is active; undefined where the browser has none to give. */
export function registerServiceWorker(): Promise<ServiceWorkerRegistration | undefined> {
  if (!("serviceWorker" in navigator) || !isSecureContext) return Promise.resolve(undefined);
  return navigator.serviceWorker.register("./sw.js", { scope: "./" }).then(
    () => navigator.serviceWorker.ready,
    () => undefined,
  );
}
