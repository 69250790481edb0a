// Handlers of the dataset operations.
export {};
