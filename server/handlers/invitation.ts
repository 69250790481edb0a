// Handlers of the invitation operations.
export {};
