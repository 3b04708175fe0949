import nodemailer from 'nodemailer';

export interface MailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** Files (scheduled exports); the record keeps their names and sizes, not their bytes. */
  attachments?: MailAttachment[];
}

export interface RecordedMail extends MailMessage {
  at: Date;
  delivered: boolean;
}

/**
 * Mail port. Without SMTP_URL a message is recorded and dropped (the spec's words): the
 * record lets operators and tests see what would have been sent.
 */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  /** The most recent messages, newest last (bounded). */
  recorded(): readonly RecordedMail[];
  readonly configured: boolean;
  close(): Promise<void>;
}

const KEEP = 500;

export function createMailer(opts: { smtpUrl: string | null; mailFrom: string }, now: () => Date): Mailer {
  const log: RecordedMail[] = [];
  const record = (m: MailMessage, delivered: boolean) => {
    const attachments = m.attachments?.map((a) => ({ ...a, content: Buffer.alloc(0), bytes: a.content.length }));
    log.push({ ...m, ...(attachments ? { attachments } : {}), at: now(), delivered });
    if (log.length > KEEP) log.shift();
  };
  const transport = opts.smtpUrl ? nodemailer.createTransport(opts.smtpUrl) : null;
  return {
    configured: transport !== null,
    async send(message) {
      if (!transport) {
        record(message, false);
        return;
      }
      await transport.sendMail({
        from: opts.mailFrom,
        to: message.to,
        subject: message.subject,
        text: message.text,
        attachments: message.attachments?.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })),
      });
      record(message, true);
    },
    recorded: () => log,
    async close() {
      transport?.close();
    },
  };
}
