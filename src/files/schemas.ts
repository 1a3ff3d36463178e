import { Type, type Static } from 'typebox';

/** docs/disputes.md, Evidence files: the most a file may hold. */
export const maxFileBytes = 5 * 1024 * 1024;

export const fileTypes = ['pdf', 'png', 'jpg'] as const;
export type FileType = (typeof fileTypes)[number];

export const FileParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const FileObject = Type.Object(
  {
    id: Type.String({ pattern: '^file_\\d{19}$' }),
    purpose: Type.Literal('dispute_evidence'),
    type: Type.Enum(fileTypes, { description: 'Found from the bytes, not from the name or the declared type' }),
    size: Type.Integer({ minimum: 1, maximum: maxFileBytes, description: 'Bytes' }),
    filename: Type.String(),
  },
  { $id: 'File' },
);
export type FileObject = Static<typeof FileObject>;

/** The multipart form, for the API reference (the route reads the parts itself). */
export const UploadFileForm = Type.Object({
  purpose: Type.Literal('dispute_evidence'),
  file: Type.String({ format: 'binary', description: 'PDF, PNG or JPEG, at most 5 MB' }),
});
