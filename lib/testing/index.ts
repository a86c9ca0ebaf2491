// The `nestjs-transactional-email/testing` entry point (EmailSandbox lands here).
export {};
