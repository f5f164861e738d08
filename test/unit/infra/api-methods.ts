import type { Template } from 'aws-cdk-lib/assertions';
import { resourcesOfType, type Resource } from './synth.js';

export type Method = Resource & {
  Properties: {
    HttpMethod: string;
    ResourceId: { Ref: string };
    OperationName?: string;
    AuthorizationType?: string;
    Integration: Record<string, unknown>;
    MethodResponses?: unknown;
  };
};

/** Every API Gateway method of the template with the full path of its resource (e.g. `/api/v1/cases/{id}`). */
export function methods(template: Template): { method: Method; path: string }[] {
  const resources = resourcesOfType(template, 'AWS::ApiGateway::Resource');
  const pathOf = (logicalId: string): string => {
    const r = resources[logicalId];
    if (!r) return '';
    const parent = r.Properties.ParentId as { Ref?: string };
    return `${parent.Ref ? pathOf(parent.Ref) : ''}/${r.Properties.PathPart as string}`;
  };
  return (Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method')) as Method[]).map((method) => ({
    method,
    path: pathOf(method.Properties.ResourceId.Ref),
  }));
}
