import multipart from '@fastify/multipart';
import { envelope, ok } from '../http/envelope.js';
import { invalidField } from '../core/errors.js';
import { merchantOf, type App } from '../http/server.js';
import { FileObject, FileParams, UploadFileForm, maxFileBytes } from './schemas.js';
import { contentTypes, tooLarge, type FileService } from './service.js';

const tags = ['Files'];

export function fileRoutes(files: FileService) {
  return (app: App) => {
    // Multipart only here: the one route that takes a file (docs/disputes.md, Evidence files).
    app.register(async (scope) => {
      await scope.register(multipart, {
        limits: { fileSize: maxFileBytes, files: 1, fields: 4, fieldSize: 1024, parts: 6 },
      });
      const api = scope as unknown as App;
      api.post(
        '/files',
        {
          schema: {
            // Out of the JSON reference and the SDK (docs/disputes.md, Evidence files: multipart and bytes).
            hide: true,
            tags,
            description:
              '`multipart/form-data` with `purpose=dispute_evidence` and `file`: a PDF, PNG or JPEG (judged by its bytes) of at most 5 MB, for dispute evidence.',
            consumes: ['multipart/form-data'],
            body: UploadFileForm,
            response: { 200: envelope(FileObject) },
          },
          // The parts are read below, as they stream; the schema above documents them.
          validatorCompiler: () => () => true,
        },
        async (request) => {
          if (!request.isMultipart()) {
            throw invalidField('file', 'the request must be multipart/form-data with purpose and file', 'multipart');
          }
          let purpose: string | undefined;
          let upload: { filename: string; bytes: Buffer } | undefined;
          try {
            for await (const part of request.parts()) {
              if (part.type === 'field') {
                if (part.fieldname === 'purpose') purpose = String(part.value);
              } else if (part.fieldname === 'file') {
                upload = { filename: part.filename, bytes: await part.toBuffer() };
              } else {
                await part.toBuffer();
              }
            }
          } catch (err) {
            if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
            throw invalidField('file', `the multipart body could not be read: ${(err as Error).message}`, 'multipart');
          }
          if (!upload) throw invalidField('file', 'file is required', 'required');
          return ok(await files.create(merchantOf(request), { purpose, ...upload }));
        },
      );
    });
    app.get(
      '/files/:id',
      {
        schema: {
          hide: true,
          tags,
          description: 'A file by its id.',
          params: FileParams,
          response: { 200: envelope(FileObject) },
        },
      },
      async (request) => ok(await files.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/files/:id/contents',
      {
        schema: {
          hide: true,
          tags,
          description: "The file's bytes, to the merchant that uploaded it only (404 to anyone else).",
          params: FileParams,
        },
      },
      async (request, reply) => {
        const { file, bytes } = await files.contents(merchantOf(request), request.params.id);
        return reply
          .type(contentTypes[file.type])
          .header('content-disposition', `attachment; filename="${file.id}.${file.type}"`)
          .header('x-content-type-options', 'nosniff')
          .send(bytes);
      },
    );
  };
}
