// Handlers of the user operations.
export {};
