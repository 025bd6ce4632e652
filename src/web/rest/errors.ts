/** An HTTP error of the REST API: its status and a message naming what is wrong (sent as `{errors: [message]}`, Flink's shape). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** 404: the job, checkpoint, vertex or route named does not exist. */
export class NotFound extends HttpError {
  constructor(message: string) {
    super(404, message);
  }
}
