// Handlers of the auth operations.
export {};
