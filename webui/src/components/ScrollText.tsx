import { useScrollRegion } from './useScrollRegion';

/** Preformatted text in a box of bounded height (an agent's message, a request body). */
export function ScrollText({ label, className, text }: { label: string; className: string; text: string }) {
  const [box, region] = useScrollRegion<HTMLPreElement>(label);
  return (
    <pre ref={box} className={className} {...region}>
      {text}
    </pre>
  );
}
